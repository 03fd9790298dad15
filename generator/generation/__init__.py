"""Exploration: feedback-directed generation of call sequences on base (Randoop, GRT), their replay
on base and head, and what the generated calls reached. Techniques are switched in `techniques`;
argument values come from `values`, directed search from `search`, seed sequences from `seeds`."""
