#!/usr/bin/env python3
"""Tiny X11 helper for the desktop smoke (ctypes + libX11, no packages).

    x11.py titles          print the name of every top-level window, one per line
    x11.py close NAME      send WM_DELETE_WINDOW to each top-level window named NAME
                           (what a window manager does when the user clicks close)

Under Xvfb there is no window manager, so top-level windows are children of the root.
"""
import ctypes
import ctypes.util
import sys

X = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
Display = ctypes.c_void_p
Window = Atom = ctypes.c_ulong
X.XOpenDisplay.restype = Display
X.XOpenDisplay.argtypes = [ctypes.c_char_p]
X.XDefaultRootWindow.restype = Window
X.XDefaultRootWindow.argtypes = [Display]
X.XInternAtom.restype = Atom
X.XInternAtom.argtypes = [Display, ctypes.c_char_p, ctypes.c_int]
X.XQueryTree.argtypes = [Display, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                         ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
X.XFetchName.argtypes = [Display, Window, ctypes.POINTER(ctypes.c_char_p)]
X.XFlush.argtypes = [Display]
X.XCloseDisplay.argtypes = [Display]


class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", Display), ("window", Window), ("message_type", Atom),
                ("format", ctypes.c_int), ("l", ctypes.c_long * 5)]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]


X.XSendEvent.argtypes = [Display, Window, ctypes.c_int, ctypes.c_long, ctypes.POINTER(XEvent)]
CLIENT_MESSAGE = 33


def top_levels(d):
    root, parent, n = Window(), Window(), ctypes.c_uint()
    kids = ctypes.POINTER(Window)()
    X.XQueryTree(d, X.XDefaultRootWindow(d), ctypes.byref(root), ctypes.byref(parent),
                 ctypes.byref(kids), ctypes.byref(n))
    for i in range(n.value):
        name = ctypes.c_char_p()
        if X.XFetchName(d, kids[i], ctypes.byref(name)) and name.value:
            yield kids[i], name.value.decode("utf-8", "replace")


def main(argv):
    d = X.XOpenDisplay(None)
    if not d:
        sys.exit("x11.py: cannot open display")
    if argv[:1] == ["titles"]:
        for _, name in top_levels(d):
            print(name)
    elif len(argv) == 2 and argv[0] == "close":
        protocols = X.XInternAtom(d, b"WM_PROTOCOLS", 0)
        delete = X.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
        sent = 0
        for w, name in top_levels(d):
            if name == argv[1]:
                ev = XEvent()
                ev.xclient.type = CLIENT_MESSAGE
                ev.xclient.window = w
                ev.xclient.message_type = protocols
                ev.xclient.format = 32
                ev.xclient.l[0] = delete
                X.XSendEvent(d, w, 0, 0, ctypes.byref(ev))
                sent += 1
        X.XFlush(d)
        if not sent:
            sys.exit(f"x11.py: no top-level window named {argv[1]!r}")
    else:
        sys.exit(__doc__)
    X.XCloseDisplay(d)


if __name__ == "__main__":
    main(sys.argv[1:])
