"""The console adapter: the /paper commands in a terminal (`paperbot console`)."""
