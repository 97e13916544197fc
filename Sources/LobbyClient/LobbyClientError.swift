/// An error answer of the lobby API: its HTTP status and the server's code and message.
public struct LobbyClientError: Error, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    /// Players left out, when an invitation could not be sent to anybody.
    public var excluded: [Invitation.Excluded]

    public var description: String { "\(status) \(code): \(message)" }
}
