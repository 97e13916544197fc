import Foundation
import Hummingbird
import Lobby
import LobbyDatabase
import Prometheus

/// The lobby's Prometheus metrics, one registry per application: requests and their latency by
/// route, time in database transactions (recorded by the store through ``factory``), WebSocket
/// clients and refused sign-ins. `GET /metrics` writes them in the text exposition format.
public final class LobbyMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()

    public init() {}

    /// The swift-metrics factory over this registry: pass it to `LobbyStore(…, metrics:)` so database
    /// time appears beside the requests.
    public var factory: PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        return factory
    }

    /// From 100 µs to 5 s: a resolution takes a fraction of a millisecond, a bcrypt sign-in a good part of a second.
    static let latencyBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    func request(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: .init(namespace: "nearplay", subsystem: "lobby", metricName: "requests", unitName: "total",
                              helpText: "HTTP requests answered, by route, method and status."),
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: .init(namespace: "nearplay", subsystem: "lobby", metricName: "request_duration", unitName: "seconds",
                              helpText: "Time from a request's head to its answer, by route and method."),
            labels: [("route", route), ("method", method)], buckets: Self.latencyBuckets
        ).record(duration)
    }

    /// A sign-in or registration refused by the throttle.
    func throttled(_ kind: String) {
        registry.makeCounter(
            descriptor: .init(namespace: "nearplay", subsystem: "lobby", metricName: "throttled_attempts", unitName: "total",
                              helpText: "Sign-ins and registrations refused with 429 by the throttle."),
            labels: [("kind", kind)]
        ).increment()
    }

    /// The text exposition, with the gauges read now.
    func exposition(webSocketClients: Int, pool: PostgresDatabase.PoolFigures? = nil) -> [UInt8] {
        registry.makeGauge(
            descriptor: .init(namespace: "nearplay", subsystem: "lobby", metricName: "websocket_clients", unitName: "",
                              helpText: "Live event connections (GET /v1/events/live) open now.")
        ).set(Double(webSocketClients))
        if let pool {
            let figures: [(String, String, Int)] = [
                ("database_connections", "PostgreSQL connections in this instance's pool.", pool.connections),
                ("database_connections_busy", "Pool connections running a transaction now.", pool.busy),
                ("database_transactions_waiting", "Transactions waiting for a free pool connection now.", pool.waiting),
                ("database_conflicts_retried", "Transactions run again after a deadlock or serialization failure, since start.", pool.retries),
            ]
            for (name, help, value) in figures {
                registry.makeGauge(descriptor: .init(namespace: "nearplay", subsystem: "lobby", metricName: name, unitName: "", helpText: help))
                    .set(Double(value))
            }
        }
        return registry.emitToBuffer()
    }
}

/// Counts every request and times it by its route pattern (`/v1/games/{id}`, not the ids), so the
/// series stay few; requests that match no route count as `unmatched`.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = LobbyRequestContext
    let metrics: LobbyMetrics
    static let knownMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        // Any token is a method to HTTP: unknown ones share one label, so a client cannot make series without end.
        let method = Self.knownMethods.contains(request.method) ? request.method.rawValue : "other"
        do {
            let response = try await next(request, context)
            metrics.request(route: route(context), method: method, status: response.status.code, duration: .now - started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.request(route: route(context), method: method, status: status, duration: .now - started)
            throw error
        }
    }

    private func route(_ context: Context) -> String {
        // Hummingbird names the not-found responder's path "NotFound".
        guard let path = context.endpointPath, path.hasPrefix("/") else { return "unmatched" }
        // `/v1/games/:id` → `/v1/games/{id}`, as the OpenAPI document names it (once per request:
        // no regular expression here, it cost 3 % of the server's CPU under load).
        guard path.contains(":") else { return path }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.first == ":" ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}

extension ContinuousClock.Instant {
    fileprivate static var now: Self { ContinuousClock.now }
}
