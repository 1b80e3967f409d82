"""The self-evolution workflow: rounds of policy, summary, N verifiers, vote and memory."""
