"""A script for `python -c`: an editor that keeps saving one note by write-then-rename while other writers run."""

EDITOR = r"""
import ctypes, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):  # renameat2(RENAME_EXCHANGE): the save and the look at what it replaced are one step
    if libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
def read(p):
    with open(p, 'rb') as f:
        return f.read()
n = 0
while not os.path.exists(stop) or n < 5:
    data = read(path)
    lines = data.split(b'\n')
    new = b'\n'.join(lines[:2] + [b'editor line %d' % n, b''] + lines[2:])
    tmp = path + '.editor.tmp'
    with open(tmp, 'wb') as f:
        f.write(new); f.flush(); os.fsync(f.fileno())
    if read(path) != data:  # like an editor that notices the file changed on disk: reload, redo
        os.unlink(tmp)
        continue
    exchange(tmp, path)
    if read(tmp) != data:  # it changed in the instant since: give it back, redo
        exchange(tmp, path)
        if read(tmp) != new:  # yet another save landed in that instant: it is the newest
            exchange(tmp, path)
        os.unlink(tmp)
        continue
    os.unlink(tmp)
    n += 1
    time.sleep(0.005)
print(n)
"""
