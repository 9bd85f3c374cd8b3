"""The daemon: the service, one writer thread per store, the watcher, the scheduler and the socket."""
