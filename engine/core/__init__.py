"""The search and its records, with no transport, process or cluster: what a problem is
(``problem``, the raw tier; ``reference``, the Python tier; ``fast`` and ``layout``, the
fast tier; ``bitset``), one worker's search (``stack``, ``stealstack``, ``victims``,
``policy``, ``termination``, ``worker``), the epochs that make it survive, stop and resume
(``epochs``, ``checkpoint``, ``loop``, ``stop_request``), and what it reports
(``result``, ``outcome``, ``progress``, ``estimate``, ``errors``, ``inputs``)."""
