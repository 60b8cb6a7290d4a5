"""The live line: fields, no output off a terminal, a final newline, logs above it;
tqdm keeps the count, the rate and the ETA; the incumbent and bound stay once known; a
bound that never moved, an estimate of under 1% and its ETA are not shown; a hand-over's
line goes on from the count and time it was left at."""
import io
import logging

import pytest

from stealsearch.engine.core.progress import MIN_FRACTION, Progress, fields_text, gap, write_above


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def last_line(text: str) -> str:
    """What a terminal shows last: the text after the last carriage return of the
    last non-empty line."""
    lines = [ln for ln in text.split("\n") if ln.strip("\r ")]
    return lines[-1].split("\r")[-1].strip()


def test_fields_and_final_newline():
    out = FakeTTY()
    bar = Progress(True, desc="clique on 4 workers", file=out, mininterval=0)
    start = bar._bar.start_t
    bar._bar._time = lambda: start                  # tqdm's clock stands still: 00:00
    bar.update(1000, incumbent=30, bound=40, steals=12, idle_workers=1, workers=4)
    bar.update(2_500_000, incumbent=31, bound=34, steals=1200, idle_workers=0, workers=4,
               fraction_done=0.25)
    bar.close()
    text = out.getvalue()
    assert text.endswith("\n")
    shown = last_line(text)
    assert shown.startswith("clique on 4 workers: 2.5M nodes")
    assert shown.endswith("00:00")                # tqdm's elapsed time
    # (no ETA: on a clock that stands still, no rate is measured)
    for piece in ("/s", "best 31", "bound 34", "gap 8.8%", "steals 1.2k", "idle 0/4",
                  "~25% done"):
        assert piece in shown, (piece, shown)
    bar.close()                      # idempotent: nothing more written
    assert out.getvalue() == text


def test_plain_lines_when_not_a_terminal_nothing_when_disabled():
    plain = io.StringIO()            # isatty() is False: no live line, no \r
    bar = Progress(True, desc="uts", file=plain, mininterval=0)
    bar.update(10, incumbent=3)
    bar.close()
    bar.close()
    assert not bar.live and "\r" not in plain.getvalue()
    assert plain.getvalue().count("\n") == 1
    assert plain.getvalue().startswith("uts: 10 nodes") and "best 3" in plain.getvalue()
    tty = FakeTTY()
    bar = Progress(False, file=tty, mininterval=0)   # --quiet / --json
    bar.update(10)
    bar.close()
    assert tty.getvalue() == ""


def test_newline_on_keyboard_interrupt():
    out = FakeTTY()
    with pytest.raises(KeyboardInterrupt):
        with Progress(True, desc="uts", file=out, mininterval=0) as bar:
            bar.update(1732, steals=3)
            raise KeyboardInterrupt
    assert out.getvalue().endswith("\n")
    assert last_line(out.getvalue()).startswith("uts: 1.73k nodes")


def test_log_records_go_above_the_line():
    out = FakeTTY()
    bar = Progress(True, desc="uts", file=out, mininterval=0)
    # the redirect hands records to tqdm.write; point it at our fake terminal
    root = logging.getLogger()
    handler = root.handlers[-1]
    handler.stream = out
    bar.update(5)
    logging.getLogger("stealsearch.engine.test").warning("a notice mid-search")
    bar.update(7)
    bar.close()
    lines = [ln.split("\r")[-1].strip() for ln in out.getvalue().split("\n")]
    assert "a notice mid-search" in lines          # a line of its own, not spliced in
    assert not root.handlers or handler not in root.handlers   # redirect undone


def test_format_without_optional_fields():
    assert fields_text({}, {"best": 3}) == "  best=3"
    assert fields_text({"incumbent": 9}, {}) == "  best 9"
    assert gap(None, 4) is None and gap(9, 10) == pytest.approx(0.1)


def test_incumbent_and_bound_stay_until_a_new_value():
    """A transport that has nothing new passes None: the line keeps the best so far."""
    out = FakeTTY()
    bar = Progress(True, desc="clique", file=out, mininterval=0)
    bar.update(5, incumbent=12, bound=25)           # the root's bound: known before any search
    bar.update(10, incumbent=14, bound=20)
    bar.update(20, incumbent=None, bound=None, steals=2)
    assert "best 14  bound 20  gap 30.0%" in bar.line()
    bar.update(30, incumbent=15)
    assert "best 15  bound 20  gap 25.0%" in bar.line()
    bar.close()


def test_a_bound_is_shown_once_the_search_moved_it():
    """The first bound is the root's (G(1000, 0.5): best 15, bound 105 for the whole
    search, gap 85.7%, said nothing); shown once it moves or meets the incumbent."""
    out = FakeTTY()
    bar = Progress(True, desc="clique", file=out, mininterval=0)
    bar.update(10, incumbent=15, bound=105)
    bar.update(10_000, incumbent=15, bound=105)
    assert "best 15" in bar.line() and "bound" not in bar.line() and "gap" not in bar.line()
    bar.update(20_000, incumbent=15, bound=104)
    assert "best 15  bound 104  gap 85.6%" in bar.line()
    bar.close()
    done = Progress(True, desc="clique", file=FakeTTY(), mininterval=0)
    done.update(10, incumbent=4, bound=4)           # the root's bound is the optimum
    assert "best 4  bound 4  gap 0.0%" in done.line()
    done.close()


def test_no_estimate_and_no_eta_below_one_percent():
    """A Dask search's first node, with its workers still loading, gave
    '1 nodes ... ~0% done, ETA 14003:40:21': an estimate that means nothing is not shown."""
    now = [100.0]
    bar = Progress(True, desc="clique on 2 workers", file=FakeTTY(), mininterval=0)
    bar._bar._time = lambda: now[0]
    bar._bar.start_t = bar._bar.last_print_t = 100.0
    now[0] = 105.0
    bar.update(1, fraction_done=1e-9)
    assert "done" not in bar.line() and "ETA" not in bar.line(), bar.line()
    assert bar._bar.total is None
    now[0] = 110.0
    bar.update(1000, fraction_done=MIN_FRACTION)    # ~1 %: the ETA from the rate
    assert "~1% done, ETA " in bar.line(), bar.line()
    bar.close()


def test_a_line_continued_after_a_hand_over_goes_on_from_its_count_and_time():
    """Phase two of a ramp-up began again at '0 nodes  00:00', then counted the 4.09 M
    nodes of phase one as done in its first half second (7.38M/s)."""
    now = [100.0]
    out = FakeTTY()
    bar = Progress(True, desc="clique on 2 workers", file=out, mininterval=0,
                   nodes=4_000_000, elapsed=12.0)
    bar._bar._time = lambda: now[0]
    bar._bar.last_print_t = 100.0
    bar._bar.start_t = 100.0 - 12.0
    assert bar.line().startswith("clique on 2 workers: 4M nodes"), bar.line()
    now[0] = 110.0
    bar.update(5_000_000)                           # 1 M new nodes in 10 s
    line = bar.line()
    assert line.startswith("clique on 2 workers: 5M nodes  100k/s"), line
    assert line.endswith("00:22"), line
    bar.close()


def test_no_eta_until_the_nodes_have_moved_for_a_while_on_the_line():
    """After a hand-over, the cluster's first interval (its workers loading) measured
    4.87k/s and showed 'ETA 3:33:37' for a search that had minutes left."""
    from stealsearch.engine.core.progress import RATE_SECONDS

    now = [100.0]
    bar = Progress(True, desc="clique on 2 workers", file=FakeTTY(), mininterval=0,
                   nodes=3_760_000, elapsed=17.0)
    bar._bar._time = lambda: now[0]
    bar._bar.last_print_t = 100.0
    now[0] = 101.0
    bar.update(3_765_000, fraction_done=0.05)
    assert "~5% done" in bar.line() and "ETA" not in bar.line(), bar.line()
    now[0] = 101.0 + RATE_SECONDS
    bar.update(4_265_000, fraction_done=0.06)
    assert "~6% done, ETA " in bar.line(), bar.line()
    bar.close()


def test_a_line_written_above_the_live_line_is_a_line_of_its_own():
    """The dashboard's link, printed while the ramp-up's line was drawn, ended up glued
    to it ('... ETA 03:21  00:08dashboard: http://...')."""
    out = FakeTTY()
    bar = Progress(True, desc="clique (ramp-up)", file=out, mininterval=0)
    bar.update(5, incumbent=3)
    write_above("dashboard: http://127.0.0.1:8787/status", file=out)
    bar.update(7, incumbent=3)
    bar.close()
    lines = [ln.split("\r")[-1].strip() for ln in out.getvalue().split("\n")]
    assert "dashboard: http://127.0.0.1:8787/status" in lines
    assert last_line(out.getvalue()).startswith("clique (ramp-up): 7 nodes")
    plain = io.StringIO()                          # no live line: a plain line
    write_above("dashboard: http://x", file=plain)
    assert plain.getvalue() == "dashboard: http://x\n"


def test_rate_and_eta_are_tqdms():
    """The rate is tqdm's smoothed node rate, the ETA tqdm's remaining time with the
    estimated tree size (nodes / fraction done) as its total (on tqdm's own clock)."""
    now = [100.0]
    out = FakeTTY()
    bar = Progress(True, desc="uts", file=out, mininterval=0)
    bar._bar._time = lambda: now[0]
    bar._bar.start_t = bar._bar.last_print_t = 100.0
    now[0] = 110.0
    bar.update(1000)                       # 100 nodes/s
    now[0] = 120.0
    bar.update(2000, fraction_done=0.5)    # 100 nodes/s; 2000 of ~4000 nodes
    assert bar._bar.total == 4000
    line = bar.line()
    assert line == "uts: 2k nodes  100/s  ~50% done, ETA 00:20  00:20", line
    bar.close()


@pytest.mark.parametrize("transport", ["sequential", "lanes"])
def test_the_line_shows_the_incumbent_and_bound_the_result_reports(transport):
    """Every backend's loop keeps the best so far and the proven bound of its last cut:
    a search cut short by its node limit ends with the line showing the result's."""
    from stealsearch.engine.transports.lanes import Lanes
    from stealsearch.engine.core.loop import EpochLoop
    from stealsearch.engine.transports.sequential import OneStack
    from stealsearch.problems.clique.generators import gnp
    from stealsearch.problems.clique.problem import CliqueProblem

    problem = CliqueProblem(gnp(250, 0.5, seed=2))
    t = OneStack(problem) if transport == "sequential" else Lanes(2)
    loop = EpochLoop(problem, t, node_limit=3000)
    assert loop.run() == "node_limit"
    r = loop.result()
    assert r.status == "interrupted" and r.bound > r.objective
    assert (loop.live.incumbent, loop.live.bound) == (r.objective, r.bound)
    done = EpochLoop(problem, OneStack(problem))
    done.run()
    r = done.result()
    assert r.status == "optimal" and (done.live.incumbent, done.live.bound) == (r.objective,) * 2
