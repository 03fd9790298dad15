"""The regression oracle on the host: observations of base and head compared, what varies on base
masked, what makes two differences the same, and which entries of a module's table differ."""
