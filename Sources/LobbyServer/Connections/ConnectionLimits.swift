import Foundation

/// How long the lobby waits for a client, and how many connections it keeps: the bounds that stop
/// idle, slow or malformed clients from holding its sockets and file descriptors.
///
/// A connection must deliver its first request head within ``headTimeout``, each request's body
/// within ``bodyTimeout`` of its head, and its next request within ``idleTimeout`` of the last
/// answer; otherwise it is answered 408 (when nothing was being answered) and closed. Unparseable
/// requests are answered 400 (431 for a head over ``maximumHeadBytes``) and closed.
public struct ConnectionLimits: Sendable, Equatable {
    /// From accepting a connection to having its first request head.
    public var headTimeout: Duration
    /// From a request's head to the end of its body.
    public var bodyTimeout: Duration
    /// From an answer to the next request's head on a kept-alive connection.
    public var idleTimeout: Duration
    /// After SIGTERM: how long requests being answered may take before every connection is closed.
    public var drainTimeout: Duration
    /// Connections one client address may hold at once; more are answered 429 and closed.
    public var maximumConnectionsPerAddress: Int
    /// Connections the lobby holds at once; beyond it, new ones wait in the listen backlog.
    /// Keep it under the process's descriptor limit (`LimitNOFILE` in the systemd unit) less
    /// ``reservedDescriptors``.
    public var maximumConnections: Int
    /// A request head's size (request line and header fields), in bytes.
    public var maximumHeadBytes: Int
    /// The IP addresses of reverse proxies in front of the lobby (nginx with several instances
    /// behind it). Their connections have no per-address share, and the client address that
    /// sign-in throttling counts is read from the `X-Forwarded-For` they add. Empty: every peer
    /// is a client, and `X-Forwarded-For` is ignored (anyone can write one).
    public var trustedProxies: Set<String> = []

    /// Descriptors kept apart from connections: the database and its WAL, the listening socket,
    /// standard streams, logs.
    public static let reservedDescriptors = 64

    public init(
        headTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(30),
        drainTimeout: Duration = .seconds(2), maximumConnectionsPerAddress: Int = 64, maximumConnections: Int = 16_000,
        maximumHeadBytes: Int = 16 * 1024
    ) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.drainTimeout = drainTimeout
        self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        self.maximumConnections = maximumConnections
        self.maximumHeadBytes = maximumHeadBytes
    }

    /// These limits with ``maximumConnections`` lowered to fit `descriptorLimit` open files, or
    /// unchanged when they fit.
    public func fitting(descriptorLimit: Int) -> ConnectionLimits {
        var limits = self
        limits.maximumConnections = max(1, min(maximumConnections, descriptorLimit - Self.reservedDescriptors))
        return limits
    }
}
