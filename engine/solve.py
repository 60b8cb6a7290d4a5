"""``solve()``: the one entry point, pybnb-style; ``resume()`` continues a checkpoint.

>>> from stealsearch.problems.uts import UTSProblem
>>> result = solve(UTSProblem.preset("default"), backend="sequential")
>>> result.count
1732
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .core.errors import InputError
from .core.policy import StealPolicy

if TYPE_CHECKING:       # the contract loads numpy: imported where it is used
    from .core.problem import Problem
    from .core.result import SearchResult

BACKENDS = ("auto", "sequential", "dask", "rampup")


def solve(problem: Problem, backend: str = "auto", *, workers: int | None = None,
          scheduler: str | None = None, cluster_config: str | None = None,
          client=None, policy: StealPolicy | None = None,
          time_limit: float | None = None, node_limit: int | None = None,
          progress: bool = False, checkpoint: str | None = None,
          checkpoint_every: float | None = None, checkpoint_info: dict | None = None,
          checkpoint_required: bool = False,
          connect_timeout: float | None = None, wait_workers: float | None = None,
          force: bool = False, grace: float | None = None,
          threads_per_worker: int | None = None, proof=None) -> SearchResult:
    """Search ``problem`` to completion (or until a limit) and return a SearchResult.

    Parameters
    ----------
    problem : Problem
        A problem of any tier (:class:`~stealsearch.engine.core.reference.PythonProblem`,
        :class:`~stealsearch.engine.core.fast.FastProblem`,
        :class:`~stealsearch.engine.core.problem.Problem`), checked by
        :func:`~stealsearch.engine.core.problem.check_problem` before anything starts.
    backend : {"auto", "sequential", "dask", "rampup"}
        "auto" (the default) uses the machine it runs on (:func:`choose_backend`):
        with no place (``workers``, ``scheduler``, ``cluster_config``, ``client``), the
        search runs at once in this process as lanes on every usable core
        (:func:`stealsearch.engine.deploy.cores.usable_cores`; no cluster, no process started),
        or, for a problem whose node code holds the GIL (the Python reference tier),
        ramps up onto a LocalCluster of one process per usable core; with ``workers``
        alone (a LocalCluster we start), it ramps up with no grace: the search starts
        here while the cluster starts; on a ``scheduler``, ``cluster_config`` or
        ``client``, "dask".
        "sequential": this process only (one thread unless ``threads_per_worker``).
        "dask": the stealstack over Dask workers from the first node.
        "rampup": start in this process at once; after ``grace`` seconds (default
        ``stealsearch.engine.transports.rampup.DEFAULT_GRACE``) start the cluster in the background and hand
        the open rows over once it is ready (:mod:`stealsearch.engine.transports.rampup`).  A search that ends
        within the grace period starts no cluster at all.  ``result.phases`` says
        which phase did what.
    workers, scheduler, cluster_config, client : optional
        Where the dask backend (or the
        ramp-up's second phase) runs; with none of them, a LocalCluster of one worker
        process per usable core is started and closed.  ``workers="auto"``: the usable
        cores.  ``workers`` with a scheduler or client: use at most that many of its
        workers.
    policy : StealPolicy, optional
        Batch sizes, victim order, budget per kernel call.
    time_limit, node_limit : optional
        Stop early with status "interrupted"; the result keeps the
        best solution found and, in optimise mode, a proven bound.  So does a first
        Ctrl-C / SIGTERM (stealsearch.engine.deploy.interrupts).
    progress : bool
        The live line on stderr while the search runs.
    checkpoint : str, optional
        A directory: every consistent cut is written there (stealsearch.engine.core.checkpoint),
        and ``resume(checkpoint)`` continues the search later, anywhere.
    checkpoint_every : float, optional
        Seconds between consistent cuts (default
        ``epochs.DEFAULT_CHECKPOINT_EVERY``, 5): the work a lost
        worker costs at most, per worker.
    checkpoint_info : dict, optional
        Extra JSON stored in the manifest (the CLI stores its command).
    checkpoint_required : bool
        A checkpoint write that fails (a full disk) stops the search, status
        "interrupted" (``stop_reason`` "checkpoint_failed"), with its result; by
        default it is said once and the search goes on without checkpoints.
        Either way ``result.info["checkpoint_error"]`` says what failed, and the
        folder keeps the last cut written.
    connect_timeout, wait_workers, force : optional
        How a cluster is reached or started; see
        :func:`stealsearch.engine.deploy.cluster.dask_client`.
    grace : float, optional
        Seconds the "rampup" backend searches here before it starts its cluster.
    threads_per_worker : int, optional
        Search threads (lanes) in each Dask worker, sharing its shared
        portion (:mod:`stealsearch.engine.core.worker`); default 1 (one lane per process
        keeps each shared portion single-owner, and a lost process costs one lane's work).  With backend "sequential", or "auto" with no
        place: that many threads in this process (:mod:`stealsearch.engine.transports.lanes`;
        "auto"'s default: the usable cores); the ramp-up's first phase runs lanes on
        min(usable cores, workers x threads_per_worker) threads (one stack for a problem
        that holds the GIL: :func:`stealsearch.engine.transports.rampup.first_phase_threads`).
    proof : str, optional
        A file name prefix: the search logs a proof of its answer, and writes the
        model ``PREFIX.opb`` and the proof ``PREFIX.pbp`` (VeriPB's format; check it
        with ``stealsearch check-proof PREFIX`` or ``veripb PREFIX.opb PREFIX.pbp``)
        when it finishes; ``result.info["proof"]`` says what was written.  For a
        problem that logs proofs (:mod:`stealsearch.engine.core.proof`), on every
        backend (a Dask worker's parts are pulled to this process before each
        commit); :func:`resume` continues the proof of a checkpoint written with one.

    Returns
    -------
    SearchResult
        ``status`` ("optimal", "found", "none", "exhausted" or "interrupted"),
        ``objective`` and ``bound`` (optimise; equal when optimal), ``count``
        (enumerate), ``solution`` (decoded, checked by the problem's own verifier:
        ``verified``), ``nodes``, ``search_seconds``/``wall_seconds``, ``workers`` (one
        WorkerStats each), ``phases``.  ``str(result)`` is a short report,
        ``result.as_dict()``/``to_json()`` its JSON (stealsearch/schemas/result.schema.json).

    Examples
    --------
    >>> from stealsearch.engine import solve
    >>> from stealsearch.problems.clique.generators import gnp
    >>> from stealsearch.problems.clique.problem import CliqueProblem
    >>> r = solve(CliqueProblem(gnp(60, 0.5, seed=1)), backend="sequential")
    >>> r.status, r.objective == r.bound, r.verified
    ('optimal', True, True)

    Cut short by a limit, a result keeps the best clique found and a proven bound:

    >>> r = solve(CliqueProblem(gnp(300, 0.5, seed=1)), backend="sequential", node_limit=1000)
    >>> r.status, r.stop_reason, r.objective <= r.bound
    ('interrupted', 'node_limit', True)

    On two Dask workers of a LocalCluster started and closed for it:

    >>> r = solve(CliqueProblem(gnp(300, 0.5, seed=1)), workers=2)   # doctest: +SKIP
    """
    from .core.problem import check_problem

    if proof is not None:
        problem = _proof_problem(problem, proof)
    check_problem(problem, policy)
    return _run(problem, backend, workers=workers, scheduler=scheduler,
                cluster_config=cluster_config, client=client, policy=policy,
                time_limit=time_limit, node_limit=node_limit, progress=progress,
                checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                checkpoint_info=checkpoint_info, checkpoint_required=checkpoint_required,
                cut=None, connect_timeout=connect_timeout,
                wait_workers=wait_workers, force=force, grace=grace,
                threads_per_worker=threads_per_worker, proof=proof)


def resume(directory: str, problem: Problem | None = None, backend: str = "auto", *,
           trust: bool = False, **kwargs) -> SearchResult:
    """Continue the search checkpointed in ``directory`` to the result an uninterrupted
    run gives (on any backend and worker count).  ``problem``: the same instance rebuilt
    from its inputs (checked against the checkpoint's hash); by default the pickled copy
    stored in the checkpoint.  Other keywords as :func:`solve`; the checkpoint keeps
    being written into ``directory`` unless ``checkpoint=`` says otherwise.  ``trust``:
    unpickle the stored problem even if this user's key did not sign the checkpoint
    (:mod:`stealsearch.engine.core.checkpoint`: a pickle can run code).  ``proof=PREFIX``
    continues the proof of a search that logged one (its checkpoint keeps the proof's
    parts so far) and writes the proof of the whole search; a checkpoint of a search
    that logged none is refused (:class:`~stealsearch.engine.core.proof.ProofUnavailable`)."""
    from .core.checkpoint import load_problem, read_cut, read_manifest
    from .core.problem import check_problem
    from .core.stack import make_stack

    manifest = read_manifest(directory)
    if problem is None:
        problem = load_problem(directory, trust=trust)
    if kwargs.get("proof") is not None:
        problem = _proof_problem(problem, kwargs["proof"])
    elif "proof_parts" in manifest:
        # a proof's search (e.g. its colour bound where "auto" would pick another): the
        # cut's rows are that search's, so it goes on as that search, without a proof
        from .core.proof import proof_problem
        problem = proof_problem(problem)
    check_problem(problem, kwargs.get("policy"))
    cut, manifest = read_cut(directory, problem, make_stack(problem).codec)
    if kwargs.get("proof") is not None and cut.proof_parts is None and cut.nodes:
        from .core.proof import ProofUnavailable
        raise ProofUnavailable(f"checkpoint {directory} was written by a search that logged "
                               "no proof (give --prove to the search it continues)")
    kwargs.setdefault("checkpoint", directory)
    kwargs.setdefault("checkpoint_info", manifest.get("info"))
    return _run(problem, backend, cut=cut, **kwargs)


def _proof_problem(problem, proof):
    """The problem as it searches with a proof, after the checks that refuse one
    before any search: the prefix's files, and the problem's own (a mode or a bound
    without proof steps).  Every backend logs proofs: one stack, lanes, Dask workers
    (their parts pulled to the client before each commit) and the ramp-up."""
    from .core.proof import check_prefix, proof_problem

    check_prefix(proof)
    return proof_problem(problem)


def _run(problem, backend, *, workers=None, scheduler=None, cluster_config=None, client=None,
         policy=None, time_limit=None, node_limit=None, progress=False, checkpoint=None,
         checkpoint_every=None, checkpoint_info=None, checkpoint_required=False, cut=None,
         connect_timeout=None, wait_workers=None, force=False, grace=None,
         threads_per_worker=None, proof=None) -> SearchResult:
    import numbers

    from .deploy import interrupts

    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    from .deploy.cluster import parse_workers
    workers = parse_workers(workers)
    if threads_per_worker is not None:
        from .deploy.cluster_config import MAX_THREADS_PER_WORKER as MAX_THREADS
        if isinstance(threads_per_worker, bool) or not isinstance(
                threads_per_worker, numbers.Integral) or not 1 <= threads_per_worker <= MAX_THREADS:
            raise InputError(f"threads per worker must be a whole number >= 1 (at most {MAX_THREADS}), "
                             f"got {threads_per_worker!r}")
    fall_back = False
    if backend == "auto":
        backend, fall_back, grace, threads_per_worker = choose_backend(
            problem, workers=workers, scheduler=scheduler, cluster_config=cluster_config,
            client=client, grace=grace, threads_per_worker=threads_per_worker)
    # types first: a string limit would otherwise end in a TypeError from a comparison
    for name, value, kinds in (("time limit", time_limit, numbers.Real),
                               ("node limit", node_limit, numbers.Integral),
                               ("checkpoint interval", checkpoint_every, numbers.Real)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            want = "an integer" if kinds is numbers.Integral else "a number of seconds"
            raise InputError(f"{name} must be {want}, got {value!r}")
    if time_limit is not None and time_limit <= 0:
        raise InputError(f"time limit must be > 0 seconds, got {time_limit}")
    if node_limit is not None and node_limit < 1:
        raise InputError(f"node limit must be >= 1, got {node_limit}")
    if checkpoint_every is not None and not checkpoint_every > 0:
        raise InputError(f"checkpoint interval must be > 0 seconds, got {checkpoint_every}")
    if checkpoint_required and checkpoint is None:
        raise InputError("checkpoint_required asks for a checkpoint folder: give checkpoint=DIR")
    if policy is not None and not isinstance(policy, StealPolicy):
        raise InputError(f"policy must be an engine.StealPolicy, got {type(policy).__name__}")
    threads = {} if threads_per_worker is None else {"threads_per_worker": int(threads_per_worker)}
    common = dict(policy=policy, time_limit=time_limit, node_limit=node_limit,
                  progress=progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                  checkpoint_info=checkpoint_info, checkpoint_required=bool(checkpoint_required),
                  cut=cut)
    with interrupts.handling_interrupts():
        if backend == "rampup":
            from .transports.rampup import Place, check_grace, run_rampup
            place = Place(client=client, workers=workers, scheduler=scheduler,
                          cluster_config=cluster_config, connect_timeout=connect_timeout,
                          wait_workers=wait_workers, force=force)
            _check_place(place, check_grace(grace))
            return run_rampup(problem, place=place, grace=grace, fall_back=fall_back,
                              proof=proof, **threads, **common)
        if grace is not None:
            raise InputError(f"a ramp-up grace applies to backend 'rampup' or 'auto' with no "
                             f"place given, not to {backend!r}")
        if backend == "sequential":
            from .transports.sequential import run_sequential
            return run_sequential(problem, threads=threads_per_worker or 1, proof=proof,
                                  **common)
        from .transports.dask import run_dask
        if client is not None:
            return run_dask(problem, client, workers=workers, proof=proof, **threads, **common)
        from .deploy.cluster import dask_client
        with dask_client(workers=workers, scheduler=scheduler, config=cluster_config,
                         connect_timeout=connect_timeout, wait_workers=wait_workers,
                         force=force) as c:
            # a LocalCluster we started has exactly ``workers``; on a scheduler, use at
            # most ``workers`` of its workers
            return run_dask(problem, c, workers=workers if (scheduler or cluster_config)
                            else None, proof=proof, **threads, **common)


def choose_backend(problem: Problem, *, workers=None, scheduler=None, cluster_config=None,
                   client=None, grace=None, threads_per_worker=None):
    """What backend "auto" means here: ``(backend, fall_back, grace, threads)``.

    The rule: one machine is best used by lanes in one process (lanes match or beat
    processes there, and start in no time, where a LocalCluster takes seconds to start;
    benchmarks/RESULTS.md has the figures), so

    * no place given: lanes on every usable core in this process, no cluster; a
      problem whose node code holds the GIL (:func:`holds_gil`) cannot use lanes, so
      it ramps up onto a LocalCluster of one process per usable core (a ``grace``
      given asks for that ramp-up too); one usable core: one stack, here;
    * ``workers`` alone (a LocalCluster this call starts): the ramp-up with no grace,
      the search going on here while the cluster starts (no start-up tax);
    * a ``scheduler``, ``cluster_config`` or ``client`` (a cluster of someone else's
      or one described elsewhere): "dask" from the first node.

    ``fall_back``: a cluster nobody asked for that cannot start is a note, and the
    search goes on here (not an error)."""
    from .core.problem import holds_gil
    from .deploy.cores import usable_cores

    if any(x is not None for x in (scheduler, cluster_config, client)):
        return "dask", False, grace, threads_per_worker
    if workers is not None:
        return "rampup", False, (0.0 if grace is None else grace), threads_per_worker
    cores = usable_cores()
    if grace is not None or (cores > 1 and holds_gil(problem)):
        return "rampup", True, grace, threads_per_worker
    return "sequential", False, grace, threads_per_worker or cores


def _check_place(place, grace: float) -> None:
    """What the ramp-up's background start would refuse, refused now in one line (it
    would otherwise surface only after ``grace`` seconds of search)."""
    import numbers

    from .deploy.addresses import check_scheduler_address

    if place.scheduler is not None and place.cluster_config is not None:
        raise InputError("give --scheduler or --cluster-config, not both")
    if place.scheduler is not None:
        check_scheduler_address(place.scheduler)
    if place.workers is not None and (isinstance(place.workers, bool) or not isinstance(
            place.workers, numbers.Integral) or place.workers < 1):
        raise InputError(f"workers must be a whole number >= 1, got {place.workers!r}")
    if place.local and place.workers is not None:
        from .deploy.cluster import check_worker_count
        check_worker_count(place.workers, place.force, notice=False)   # cores, memory
    if place.cluster_config is not None:
        from .deploy.cluster_config import read_cluster_config
        read_cluster_config(place.cluster_config)
