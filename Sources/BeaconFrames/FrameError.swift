/// Why bytes are not the frame or structure a decoder expected.
///
/// Every case says where: a byte offset into the input the decoder was given.
public enum FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input was empty.
    case empty(what: String)
    /// The input ends before `what` is complete: `needed` bytes from `offset`, `available` left.
    case truncated(what: String, offset: Int, needed: Int, available: Int)
    /// A length field disagrees with the bytes that follow or with what the format requires.
    case wrongLength(what: String, offset: Int, expected: String, found: Int)
    /// A byte or field at `offset` holds another value than the format requires.
    case unexpectedValue(what: String, offset: Int, expected: String, found: String)
    /// Nothing in the input is the structure asked for (e.g. no manufacturer data at all).
    case notFound(what: String)

    public var description: String {
        switch self {
        case let .empty(what):
            "\(what): no bytes"
        case let .truncated(what, offset, needed, available):
            "\(what) at byte \(offset) needs \(needed) bytes but only \(available) remain"
        case let .wrongLength(what, offset, expected, found):
            "\(what) at byte \(offset) has length \(found), expected \(expected)"
        case let .unexpectedValue(what, offset, expected, found):
            "\(what) at byte \(offset) is \(found), expected \(expected)"
        case let .notFound(what):
            "no \(what) found"
        }
    }

    /// The same error with its offset moved by `delta`, for errors raised on a sub-range.
    public func shifted(by delta: Int) -> FrameError {
        switch self {
        case .empty, .notFound: self
        case let .truncated(what, offset, needed, available):
            .truncated(what: what, offset: offset + delta, needed: needed, available: available)
        case let .wrongLength(what, offset, expected, found):
            .wrongLength(what: what, offset: offset + delta, expected: expected, found: found)
        case let .unexpectedValue(what, offset, expected, found):
            .unexpectedValue(what: what, offset: offset + delta, expected: expected, found: found)
        }
    }
}
