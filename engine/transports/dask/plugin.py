"""The worker plugin of the stealstack: what a Dask worker gets when it is registered.

Its setup attaches the stealstack's worker extension (:class:`.tables.StealstackExtension`:
the searches' state, the router of the search messages, the set-up path's handlers, the
reaper) if the worker has none, and opens it again if it has one: re-registering the
plugin reuses the extension, so a running search is never dropped.  Its teardown hands
the running epochs over to their peers when the worker closes (the extension's
:meth:`~.tables.StealstackExtension.hand_over`), then closes the extension.  It also
quiets the worker's log.

The plugin is registered once per client (:func:`.calls.register_plugin`).
"""
from __future__ import annotations

import logging

from distributed.diagnostics.plugin import WorkerPlugin

from ...deploy.quiet_logs import drop_heartbeat_noise, quiet_stray_connections
from .tables import StealstackExtension, extension_of

logger = logging.getLogger("stealsearch")

PLUGIN_NAME = "stealsearch-stealstack"


class StealstackPlugin(WorkerPlugin):
    """Attaches the stealstack's extension to a worker (its handlers, the reaper of
    idle problems) and hands its epochs over on a graceful close."""

    name = PLUGIN_NAME
    #: registering it again (another search from the same client, a second client)
    #: is a no-op on workers that have it
    idempotent = True

    def setup(self, worker):
        drop_heartbeat_noise()
        quiet_stray_connections()
        extension = extension_of(worker)
        if extension is None:
            StealstackExtension(worker)        # attaches itself and opens
        else:
            extension.open()

    async def teardown(self, worker):
        from distributed.core import Status

        extension = extension_of(worker)
        if extension is None:
            return
        try:
            if worker.status in (Status.closing, Status.closing_gracefully):
                await extension.hand_over()
            elif extension.searches:
                logger.warning("worker %s tears the plugin down while %s with %d epoch(s) "
                               "running: nothing handed over", worker.address, worker.status,
                               len(extension.searches))
        except Exception as exc:     # the client then rolls the epoch back, as for a loss
            logger.warning("hand-over failed: %r", exc)
        finally:
            extension.close()
