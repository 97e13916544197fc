import Glibc
import SystemSupport
import Testing

/// The checked system calls: errno travels in the error, "no data yet" and "full" are answers,
/// not errors.
@Suite struct SystemCallTests {
    @Test func aNonBlockingPipeSaysEmptyFullAndEndOfFile() throws {
        let (reader, writer) = try SystemCall.pipe(nonBlocking: true)
        defer { SystemCall.close(reader) }
        var bytes = [UInt8](repeating: 0, count: 4)
        #expect(try SystemCall.read(reader, into: &bytes) == -1, "empty: no data yet, not an error")
        #expect(try SystemCall.writeByte(writer, 7))
        #expect(try SystemCall.read(reader, into: &bytes, from: 1) == 1)
        #expect(bytes == [0, 7, 0, 0])
        var written = 0
        while try SystemCall.writeByte(writer, 1) { written += 1 }
        #expect(written >= 4096, "a pipe holds at least a page before it says full")
        #expect(fcntl(reader, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(writer, F_GETFL) & O_NONBLOCK != 0)
        SystemCall.close(writer)
        var drained = [UInt8](repeating: 0, count: 65536)
        while try SystemCall.read(reader, into: &drained) > 0 {}
        #expect(try SystemCall.read(reader, into: &drained) == 0, "end of file once the writer is gone")
    }

    @Test func writesEverythingAndWaitsForData() throws {
        let (reader, writer) = try SystemCall.pipe(nonBlocking: false)
        defer { SystemCall.close(reader) }
        #expect(try SystemCall.waitReadable(reader, timeoutMilliseconds: 0) == false)
        try SystemCall.write(writer, [1, 2, 3])
        #expect(try SystemCall.waitReadable(reader, timeoutMilliseconds: 1000))
        SystemCall.close(writer)
        var bytes = [UInt8](repeating: 0, count: 8)
        #expect(try SystemCall.read(reader, into: &bytes) == 3)
        #expect(bytes.prefix(3) == [1, 2, 3])
    }

    @Test func aFailureCarriesTheCallThePathAndErrno() throws {
        let path = "/nonexistent-nearplay-folder/file"
        let error = #expect(throws: SystemCallError.self) { try SystemCall.open(path, O_RDONLY) }
        #expect(error == SystemCallError("open", path: path, errno: ENOENT))
        #expect(error?.description == "open \(path) failed: No such file or directory (errno \(ENOENT))")
        let fd = try SystemCall.open("/dev/null", O_RDONLY)
        defer { SystemCall.close(fd) }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "opened close-on-exec")
        #expect(throws: SystemCallError("write", path: "/dev/null", errno: EBADF)) {
            try SystemCall.write(fd, [1], path: "/dev/null")
        }
    }
}
