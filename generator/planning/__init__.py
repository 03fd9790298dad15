"""Where the budget goes: which code reaches the changed units, the units' defect scores from the
git history, their shares of generation, the operations aimed at, and when each phase stops."""
