import Glibc
@testable import Sensors
import SystemSupport
import Testing

/// A failed system call read as the sensors read it: opening without permission points at the
/// udev rules, a missing file is a missing attribute, anything else an I/O error with errno.
@Suite struct SystemCallErrorTests {
    @Test func opensThatFailSayWhy() {
        #expect(SensorError(SystemCallError("open", path: "/p", errno: EACCES)) == .permissionDenied(path: "/p"))
        #expect(SensorError(SystemCallError("open", path: "/p", errno: EPERM)) == .permissionDenied(path: "/p"))
        #expect(SensorError(SystemCallError("open", path: "/p", errno: ENOENT)) == .missingAttribute(path: "/p"))
        #expect(SensorError(SystemCallError("open", path: "/p", errno: EMFILE)) == .io(path: "/p", operation: "open", errno: EMFILE))
    }

    @Test func otherCallsAreIOErrors() {
        #expect(SensorError(SystemCallError("read", path: "/p", errno: ENOENT)) == .io(path: "/p", operation: "read", errno: ENOENT))
        #expect(SensorError(SystemCallError("poll", path: "/dev/iio:device0", errno: EINVAL))
            == .io(path: "/dev/iio:device0", operation: "poll", errno: EINVAL))
    }

    @Test func aDirectoryCannotBeReadAsAnAttribute() throws {
        #expect(throws: SensorError.io(path: "/", operation: "read", errno: EISDIR)) { try Sysfs.readText("/") }
    }
}
