"""Ready cluster descriptions (``local``, ``scheduler``, ``tls``, ``ssh``, ``slurm``, ``pbs``,
``kubernetes``), shipped with the package: ``--cluster-config FILE`` reads any of them (or a
copy edited for your site); README.md in this folder says what each one needs."""
