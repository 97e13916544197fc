import Foundation
import Glibc

/// A fresh folder of its own for a test, removed (with everything in it) when the value goes
/// away. Made by `mkdtemp`, so it is unique even across test processes running at once, and
/// owner-only.
///
/// It lives under /tmp (not `$TMPDIR`) with a short name, `/tmp/np-<label>-XXXXXX`: Unix socket
/// paths are limited to 107 bytes, and tests put sockets in it.
public final class TemporaryFolder: Sendable {
    public let path: String

    /// `label` (short, no slashes) says whose folder it is when one is left behind.
    public init(_ label: String = "test") throws {
        var template = Array("/tmp/np-\(label)-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: created)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` inside the folder (folders on the way created) and returns its path.
    /// `atomically` writes a new file and renames it over the old one, so a reader running at
    /// the same time (a fake sysfs attribute changed under a sensor) never sees it half written.
    @discardableResult
    public func write(_ text: String, to name: String, atomically: Bool = false) throws -> String {
        try write(Array(text.utf8), to: name, atomically: atomically)
    }

    /// Writes `bytes` to `name` inside the folder (folders on the way created) and returns its path.
    @discardableResult
    public func write(_ bytes: [UInt8], to name: String, atomically: Bool = false) throws -> String {
        let url = URL(fileURLWithPath: path + "/" + name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url, options: atomically ? .atomic : [])
        return url.path
    }

    /// The text of `name` inside the folder.
    public func read(_ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + name, encoding: .utf8)
    }
}
