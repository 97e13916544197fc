import Glibc
import SystemSupport

/// The text of an errno value, as `strerror` gives it.
func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

extension SensorError {
    /// The sensors' reading of a failed system call: a file that cannot be opened for want of
    /// permission or because it is not there says so (with the udev rule to install); anything
    /// else is an I/O error naming the file and errno.
    init(_ error: SystemCallError) {
        let path = error.path ?? ""
        switch (error.operation, error.errno) {
        case ("open", EACCES), ("open", EPERM): self = .permissionDenied(path: path)
        case ("open", ENOENT): self = .missingAttribute(path: path)
        default: self = .io(path: path, operation: error.operation, errno: error.errno)
        }
    }

    /// Runs one of ``SystemCall``'s checked calls, its error read as the sensors read it.
    static func catching<T>(_ call: @autoclosure () throws(SystemCallError) -> T) throws(SensorError) -> T {
        do {
            return try call()
        } catch {
            throw SensorError(error)
        }
    }
}
