"""The memory explorer: a single page served on localhost that draws a user's graph, its history
and its sources, talking to the API through a proxy of its own (`gligabao explore`).

A local tool: the Lambda layer does not ship it (layers/core/Makefile removes it)."""
