"""What every command shares: the flags and helpers of the command line
(``commandline``), parameter sweeps (``sweep``, ``sweep_grid``, ``sweep_table``,
``provenance``) and honest timings (``timing``)."""
