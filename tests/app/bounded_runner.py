"""Runs bad-input cases of the command line, each in a child forked from this process
once the CLI is imported (cheap: no import per case), and reports per case its exit
code, stderr and peak resident memory above its own at the start (``os.wait4``'s ru_maxrss).
Used by test_bounded_inputs.py: ``python bounded_runner.py CASES.json REPORT.json``;
a case is {"name", "argv", "env", "cwd", "stdin"?}.  A case that runs past its limit is
SIGKILLed by the parent (reported as exit -9)."""
import json
import os
import resource
import signal
import sys
import time


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main(cases_path, report_path, limit=60.0):
    from stealsearch.cli import build_parser, main as cli_main

    # the heavy imports, once: every sub-command's module (build_parser imports them),
    # and what a command imports when it reads its input or starts its search
    build_parser()
    import stealsearch.engine.solve, stealsearch.engine.app.sweep, stealsearch.engine.core.checkpoint  # noqa
    import stealsearch.problems.clique.io, stealsearch.problems.commclust.io  # noqa
    import stealsearch.engine.deploy.cluster, distributed, yaml  # noqa

    cases = json.load(open(cases_path))
    report = []
    for case in cases:
        err_path = report_path + f".{len(report)}.err"
        pid = os.fork()
        if pid == 0:                                  # the child: one case
            try:
                # its resident memory now (file-backed pages of the parent are faulted in
                # lazily: the parent's figure would hide growth)
                with open(err_path + ".base", "w") as f:
                    f.write(str(rss_kib()))
                fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 2)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 1)
                os.dup2(null, 0)
                os.environ.update(case.get("env", {}))
                os.chdir(case["cwd"])
                code = cli_main(case["argv"])
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code if isinstance(code, int) else 1)
            except SystemExit as e:
                os._exit(e.code if isinstance(e.code, int) else 1)
            except BaseException:
                import traceback
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(70)
        t0 = time.monotonic()
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - t0 > limit:
                os.kill(pid, signal.SIGKILL)
                done, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.01)
        code = os.waitstatus_to_exitcode(status)
        base = int(open(err_path + ".base").read() or 0)
        os.unlink(err_path + ".base")
        report.append({"name": case["name"], "code": code, "seconds": time.monotonic() - t0,
                       "peak_above_start_mib": max(0, usage.ru_maxrss - base) / 1024,
                       "stderr": open(err_path, errors="replace").read()})
        os.unlink(err_path)
    json.dump(report, open(report_path, "w"))


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main(sys.argv[1], sys.argv[2])
