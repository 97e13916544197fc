import BeaconFrames

/// One advertisement from a trace, with what the trace knows beyond it.
public struct TraceRecord: Sendable, Hashable {
    public var advertisement: Advertisement
    /// Ground-truth distance in metres, when the trace carries it (`truth_m`).
    public var truthDistance: Double?
    /// 1-based line number in a trace file, or record number in a btsnoop file.
    public var line: Int

    public init(advertisement: Advertisement, truthDistance: Double? = nil, line: Int = 0) {
        self.advertisement = advertisement
        self.truthDistance = truthDistance
        self.line = line
    }
}

/// A problem with one part of a trace: where it is and what is wrong. Readers report these and
/// go on with the next line.
public struct TraceIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// 1-based line for trace files; for btsnoop files the record number.
    public var line: Int?
    /// Byte offset in the file, where that says more than a line (btsnoop).
    public var byteOffset: Int?
    public var message: String

    public init(file: String, line: Int? = nil, byteOffset: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.byteOffset = byteOffset
        self.message = message
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let byteOffset { location += " (byte \(byteOffset))" }
        return "\(location): \(message)"
    }
}

/// A trace that cannot be read at all (not a trace, unreadable file): the whole file is refused.
public struct TraceFileError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { (line.map { "\(file):\($0)" } ?? file) + ": " + message }
}
