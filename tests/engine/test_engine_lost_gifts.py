"""A STEAL reply lost in flight while its giver leaves gracefully (a retire): the giver
counted the rows given, the thief's call failed, and the rows are in no outcome.  The
giver's outcome carries its recent gifts, the thief's its lost asks, and
:func:`reclaim_lost_gifts` puts exactly the lost rows back: the epoch conserves its rows
and can be committed.  Forced: the thief's stand-in host runs the victim's real STEAL
handler and then loses its reply.
"""
import numpy as np
import pytest

from stealsearch.engine import StealPolicy
from stealsearch.engine.core.epochs import EpochSpec, conserves, reclaim_lost_gifts
from stealsearch.engine.core.stack import RowCodec, make_stack
from stealsearch.engine.core.worker import WorkerSearch
from stealsearch.problems.uts import UTSParams, UTSProblem
from test_engine_lanes import StandIn
from test_engine_steal_scale import SMALL_OPTIONS, _run_epoch

ADDRS = ["tcp://stand-in:0", "tcp://stand-in:1"]


class LosingThief(StandIn):
    """Rank 0's host: its STEALs reach the victim's handler, whose rows are then lost on
    the way back (the connection closed under the call), ``lose`` times; later ones
    arrive."""

    def __init__(self, victim, lose):
        super().__init__(ADDRS[0])
        self.victim, self.lose = victim, lose

    def rpc(self, addr):
        host = self

        class Peer:
            def __getattr__(self, name):
                async def call(search_id, epoch, **kwargs):
                    if name != "stealsearch_steal":
                        return "ok"
                    reply = host.victim.handle_steal(**kwargs)
                    if host.lose > 0:
                        host.lose -= 1
                        from distributed.comm import CommClosedError
                        raise CommClosedError("the reply was lost in flight")
                    return reply
                return call
        return Peer()


def _spec(seconds):
    return EpochSpec(search_id="gifts", epoch=1, peers=ADDRS,
                     policy=StealPolicy(demand_wait=0.0, k=3, steal_half=False),
                     incumbent=0, epoch_seconds=seconds, time_left=None, node_limit=None,
                     t_offset=0.0, peer_timeout=10.0, threads=1)


def _sorted(rows):
    return sorted(map(tuple, np.asarray(rows).tolist()))


@pytest.mark.parametrize("leaving, lose", [(True, 1), (True, 0), (False, 1)])
def test_a_reply_lost_while_its_giver_leaves_goes_back_to_the_giver(leaving, lose):
    problem = UTSProblem(UTSParams.parse(SMALL_OPTIONS))
    stack = make_stack(problem)         # some open rows of the tree: a few nodes expanded
    stack.push(np.ascontiguousarray(problem.root_frontier(), dtype=np.int64))
    stack.run(20, 0)
    rows = stack.take_all()
    assert len(rows) >= 8
    victim_host = StandIn(ADDRS[1])
    # the victim's rows wait in its shared portion (no lane runs: its epoch ends at once)
    victim = WorkerSearch(victim_host, _spec(0.0), 1, rows[:0], problem)
    victim_host.search = victim
    victim.shared.release(rows)
    thief_host = LosingThief(victim, lose)
    # the thief starts with nothing: it steals at once, and a lost reply fails its epoch
    thief = WorkerSearch(thief_host, _spec(0.5), 0, rows[:0], problem)
    thief_host.search = thief
    thief_out = _run_epoch(thief_host, thief)
    victim.leaving = leaving
    victim.handle_stop("cut")
    victim_out = _run_epoch(victim_host, victim)
    outs = [thief_out, victim_out]

    given = victim_out.stats.rows_given
    assert given >= 3, "the victim gave rows"
    if lose:
        assert thief_out.lost_asks == ((1, 1),) and thief_out.failure
        assert thief_out.stats.rows_stolen == 0
        assert not conserves(outs), "a lost reply unbalances the epoch"
    moved = reclaim_lost_gifts(outs, RowCodec(rows.shape[1]))
    if leaving or not lose:
        assert moved == (given if lose else 0)
        assert conserves(outs)
        # every row is in exactly one place: the thief's cut or the victim's, or searched
        # by the thief (its nodes); none twice
        if lose:
            assert _sorted(victim_out.rows) == _sorted(rows)
    else:
        # a giver that did not leave keeps no gifts: the epoch is rolled back, as before
        assert moved == 0 and not conserves(outs)
