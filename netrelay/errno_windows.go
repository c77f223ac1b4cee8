package netrelay

import "syscall"

// WSAEADDRINUSE: Windows' "address already in use".
const errAddrInUse = syscall.Errno(10048)
