"""Adapters that give agent frameworks continuity's memory through their own interfaces, each
behind an optional extra (issue 46 item 2): ``agents_sdk`` (the OpenAI Agents SDK's ``Session``
protocol: ``ContinuitySession``, extra ``agents``). An adapter records what the framework hands
it losslessly in the workspace and answers with seed 002's bounded continuation; it is an edge
like the daemon, so nothing below imports it, and a module here imports its framework only
where it needs it.

May import: every package below it: ``core`` to ``browse``.
"""
