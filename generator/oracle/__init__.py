"""The regression oracle on the host: observations of base and head compared, what varies on base
masked, and what makes two differences the same."""
