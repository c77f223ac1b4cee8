package shells

// closeOnExec: Windows hands a child only the handles it is given.
func closeOnExec(int) {}
