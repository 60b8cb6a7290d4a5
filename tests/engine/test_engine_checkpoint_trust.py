"""A checkpoint can no longer run code nor write files the person resuming
did not name.  A crafted problem.pickle (its ``__reduce__`` writes a file), an edited
manifest (a stored command that writes elsewhere, fields of the wrong type), another
user's key: each is one line, exit 2, and nothing runs; ``trust`` / ``--trust`` is
the only way past the signature, never past the command's validation."""
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys

import pytest

from stealsearch.cli import main
from stealsearch.engine import resume
from stealsearch.engine.core.checkpoint import CheckpointError, key_path, sign, signing_key

BIN = os.path.dirname(sys.executable)


class Exploit:
    """A pickle that runs code when loaded: it writes ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A checkpoint of a small UTS run, written (and signed) by this user."""
    d = tmp_path_factory.mktemp("trust") / "ck"
    assert main(["uts", "--tree", "default", "--sequential", "--node-limit", "100",
                 "--checkpoint", str(d)]) == 0
    return d


def fresh(signed, tmp_path):
    d = tmp_path / "ck"
    shutil.copytree(signed, d)
    return d


def edit(d, **fields):
    m = json.loads((d / "manifest.json").read_text())
    m.update(fields)
    (d / "manifest.json").write_text(json.dumps(m))
    return m


def test_key_is_the_users_own_and_0600(signed):
    p = key_path()
    assert p.is_file() and stat.S_IMODE(p.stat().st_mode) == 0o600
    assert str(p).startswith(os.environ["XDG_CONFIG_HOME"])
    m = json.loads((signed / "manifest.json").read_text())
    assert len(m["hmac"]) == 64 and len(m["problem_sha256"]) == 64
    assert signing_key() not in (signed / "manifest.json").read_bytes()


def test_signed_checkpoint_resumes_without_trust(signed, tmp_path, capsys):
    capsys.readouterr()
    r = resume(str(fresh(signed, tmp_path)), backend="sequential")     # the pickled problem
    assert r.count == 1732


def test_crafted_pickle_never_runs(signed, tmp_path, capsys):
    d = fresh(signed, tmp_path)
    marker = tmp_path / "pwned"
    (d / "problem.pickle").write_bytes(pickle.dumps(Exploit(marker)))
    with pytest.raises(CheckpointError, match="not the one its signed manifest names"):
        resume(str(d), backend="sequential")
    # the attacker also re-signs nothing: an unsigned manifest naming the new pickle
    import hashlib
    m = edit(d, problem_sha256=hashlib.sha256((d / "problem.pickle").read_bytes()).hexdigest())
    with pytest.raises(CheckpointError, match="trust=True"):
        resume(str(d), backend="sequential")
    # signed with another key (another user, another machine)
    (d / "manifest.json").write_text(json.dumps(sign(m, b"another user's key")))
    with pytest.raises(CheckpointError, match="another key or was altered"):
        resume(str(d), backend="sequential")
    assert not marker.exists()
    # the CLI never unpickles: it rebuilds the problem from the stored command
    assert main(["resume", str(d), "--sequential", "--trust"]) == 0
    assert not marker.exists()
    capsys.readouterr()


def run_cli(*argv):
    p = subprocess.run([os.path.join(BIN, "stealsearch"), *argv], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_edited_stored_command_is_refused_one_line(signed, tmp_path):
    """The issue's attack: a manifest whose stored command writes a file of the
    attacker's choosing.  Unsigned: refused; with --trust: refused by the validation
    (not a search, or an output path); its --checkpoint is replaced by DIR."""
    d = fresh(signed, tmp_path)
    target = tmp_path / "chosen"
    m = json.loads((d / "manifest.json").read_text())
    m["info"]["argv"] = ["sweep", "grid.yaml", "--out", str(target)]
    (d / "manifest.json").write_text(json.dumps(m))
    rc, out, err = run_cli("resume", str(d), "--sequential")
    assert rc == 2 and err.count("\n") == 1 and "--trust" in err and "altered" in err, err
    rc, out, err = run_cli("resume", str(d), "--sequential", "--trust")
    assert rc == 2 and err.count("\n") == 1 and "not a search sub-command" in err, err
    assert not target.exists()
    # a search command's output flags: the checkpoint is replaced by the resumed DIR
    m["info"]["argv"] = ["uts", "--tree", "default", "--sequential", "--checkpoint", str(target)]
    (d / "manifest.json").write_text(json.dumps(sign(m, signing_key())))
    assert main(["resume", str(d), "--sequential"]) == 0
    assert not target.exists()
    assert json.loads((d / "manifest.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("field, value", [
    ("best_value", "big"), ("info", [1, 2]), ("nodes", -5), ("counters", "x"),
    ("rows_file", "../../etc/passwd"), ("history", [[0, "a"]]), ("epochs", True),
    ("info", {"argv": "uts --tree T3"}), ("elapsed", None),
])
def test_manifest_of_wrong_types_is_one_line(signed, tmp_path, capsys, field, value):
    d = fresh(signed, tmp_path)
    m = json.loads((d / "manifest.json").read_text())
    m[field] = value
    (d / "manifest.json").write_text(json.dumps(sign(m, signing_key())))   # even signed
    capsys.readouterr()
    assert main(["resume", str(d), "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "manifest.json" in err, err
    with pytest.raises(CheckpointError):
        resume(str(d), backend="sequential", trust=True)


def test_key_readable_by_others_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    k = signing_key()
    assert k and stat.S_IMODE(key_path().stat().st_mode) == 0o600
    key_path().chmod(0o644)
    with pytest.raises(CheckpointError, match="readable by other users"):
        signing_key()


@pytest.fixture(scope="module")
def clique_signed(tmp_path_factory):
    """A checkpoint of a small clique run (its command has an output option, --out)."""
    d = tmp_path_factory.mktemp("trust-clique") / "ck"
    assert main(["clique", "--gnp", "120", "0.8", "--sequential", "--node-limit", "20",
                 "--checkpoint", str(d)]) == 0
    return d


@pytest.mark.parametrize("signed_again", [True, False], ids=["signed", "unsigned"])
def test_abbreviated_or_respelt_options_never_steer_a_resume(clique_signed, tmp_path, capsys,
                                                             signed_again):
    """A stored command is checked as parsed, with every option spelt in full: an
    abbreviation (``--ou``, ``--sched``, ``--cluster-c``) is refused in one line, exit 2,
    signed or not (then with --trust), and nothing it names is written, reached or
    loaded; ``--out=FILE`` is refused as ``--out FILE`` is."""
    chosen = tmp_path / "chosen"
    config = tmp_path / "chosen.yaml"
    config.write_text("kind: local\nworkers: 1\n")
    for extra, why in ((["--ou", str(chosen)], "unrecognized arguments: --ou"),
                       (["--sched", "tcp://127.0.0.1:9"], "unrecognized arguments: --sched"),
                       (["--cluster-c", str(config)], "unrecognized arguments: --cluster-c"),
                       ([f"--out={chosen}"], "writes --out")):
        d = tmp_path / f"ck{len(list(tmp_path.iterdir()))}"
        shutil.copytree(clique_signed, d)
        m = json.loads((d / "manifest.json").read_text())
        m["info"]["argv"] = [a for a in m["info"]["argv"] if a != "--sequential"] + extra
        (d / "manifest.json").write_text(json.dumps(sign(m, signing_key()) if signed_again
                                                    else m))
        capsys.readouterr()
        assert main(["resume", str(d)] + ([] if signed_again else ["--trust"])) == 2, extra
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and "; refusing to " in err, err
        assert not chosen.exists()
    # every parser refuses an abbreviation of its own options too
    assert main(["uts", "--tre", "default", "--sequential"]) == 2
    assert main(["resume", str(clique_signed), "--seq"]) == 2
    assert "unrecognized arguments: --seq" in capsys.readouterr().err
