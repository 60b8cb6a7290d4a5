"""Processes and clusters: the one door to a cluster (``cluster``, ``cluster_config``,
``addresses``), the usable cores (``cores``), signals and shielded starts
(``interrupts``), plain functions as Dask tasks (``tasks``), the dashboard's search page
(``monitor``, ``monitor_page``) and the logs we keep quiet (``quiet_logs``)."""
