"""Running the project's code from the host: worker processes under the project's interpreter, the
catalog they list, the call sequences they run, and the packages lent to them."""
