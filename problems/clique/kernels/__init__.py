"""The numba code of the clique search, one module per role.

``rows`` (the row layout and the node steps the kernels share), ``colour_classes``
(greedy colouring a class at a time), ``bounds_colour``, ``bounds_reason`` (with
``reasoning``, its tests on one vertex, and ``partite``, the SAT filtering of its
``filtsat`` level) and ``bounds_seed`` (the search kernels by bound), ``counting`` (the
counting kernels), ``orders`` (vertex orders and partitions) and ``greedy`` (the initial
clique).  Import from the modules; this file exports nothing.
"""
