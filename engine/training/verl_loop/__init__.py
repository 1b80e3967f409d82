"""verl's own trainer on apollo's episodes: the ``apollo`` agent loop (docs/training.md).

loop: ``ApolloAgentLoop``, registered with verl as ``apollo`` (imports verl); client: the
model client that generates through verl's ``server_manager``, token ids in and out;
relay: ``verl:`` model calls carried over NATS to the agent loop holding the sample (every
worker's router uses it; no verl import); bridge: the process's connection to apollo's
engine and its in-process worker; sample: a verl sample's problem and sampling parameters,
checked; outcome: a run's reward or the reason its sample is masked; masking: dropping
masked samples from a ``DataProto``.
"""
