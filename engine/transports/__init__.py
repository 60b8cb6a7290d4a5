"""Where an epoch runs, each a :class:`stealsearch.engine.core.loop.Transport`: one stack
in this thread (``sequential``), threads of the worker core in this process (``lanes``),
the worker core on every Dask worker (``dask``), and the ramp-up that starts here and
hands the rows to Dask if the search lasts (``rampup``).  A new backend is a new
transport."""
