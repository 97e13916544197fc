import Foundation
import Synchronization

/// What a store remembers in memory to keep players honest about whom they met: when each
/// player's agent last spoke to the lobby, and how fast each player reports encounters, resolves
/// identities and names identities that lead nowhere.
///
/// Activity is also written to `player.activeAt`, at most once a minute per player and inside the
/// next write transaction (``LobbyStore/write(_:)``), so it costs no transaction of its own; the
/// check reads both, so a player is on the air at once on this store and within one write on
/// any other process sharing the database (on PostgreSQL, where instances share it, that write
/// follows at once: ``LobbyStore/noteActive(_:)``). The buckets are this process's own: a lobby run as
/// several processes gives a player each one's allowance.
final class FairPlayLedger: Sendable {
    /// How often a player's activity is written down at most.
    static let activityGranularity: TimeInterval = 60
    /// Players whose activity is remembered in memory at most; past it the oldest half goes (the
    /// database still has them).
    static let activityCapacity = 200_000

    private struct State {
        var reports: AttemptBuckets
        /// Location beacons' reports of what they hear, per player and location: an owner runs
        /// one beacon per location, and a stranger's attempts spend only the stranger's.
        var hearings: AttemptBuckets
        var resolutions: AttemptBuckets
        var guesses: AttemptBuckets
        /// The newest activity noted per player, written or not.
        var active: [Int64: Date] = [:]
        /// When each player's activity was last queued for writing.
        var queuedAt: [Int64: Date] = [:]
        var pending: [Int64: Date] = [:]
    }

    private let state: Mutex<State>

    init(_ configuration: LobbyConfiguration) {
        state = Mutex(State(
            reports: AttemptBuckets(.init(burst: configuration.encounterReportsPerMinute, interval: 60 / Double(configuration.encounterReportsPerMinute))),
            hearings: AttemptBuckets(.init(burst: configuration.encounterReportsPerMinute, interval: 60 / Double(configuration.encounterReportsPerMinute))),
            resolutions: AttemptBuckets(.init(burst: configuration.resolutionsPerMinute, interval: 60 / Double(configuration.resolutionsPerMinute))),
            guesses: AttemptBuckets(.init(burst: configuration.identityGuessesPerHour, interval: 3600 / Double(configuration.identityGuessesPerHour)))))
    }

    /// The player's agent spoke to the lobby at `now`. Answers whether this queued the activity for
    /// writing (at most once per ``activityGranularity``).
    @discardableResult
    func noteActive(_ player: Int64, at now: Date) -> Bool {
        state.withLock { state in
            state.active[player] = now
            if let queued = state.queuedAt[player], now.timeIntervalSince(queued) < Self.activityGranularity { return false }
            state.queuedAt[player] = now
            state.pending[player] = now
            if state.active.count > Self.activityCapacity {
                let cut = state.active.values.sorted()[state.active.count / 2]
                state.active = state.active.filter { $0.value > cut }
                state.queuedAt = state.queuedAt.filter { state.active[$0.key] != nil }
            }
            return true
        }
    }

    /// When the player was last noted active by this process.
    func lastActive(_ player: Int64) -> Date? { state.withLock { $0.active[player] } }

    /// The activity to write, taken out of the queue.
    func takePendingActivity() -> [(player: Int64, at: Date)] {
        state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            // In player order: on PostgreSQL these updates lock player rows, and every transaction
            // that locks several takes them in id order, so none waits on another in a circle.
            return state.pending.map { ($0.key, $0.value) }.sorted { $0.player < $1.player }
        }
    }

    /// Puts activity back that a failed transaction did not write.
    func requeue(_ activity: [(player: Int64, at: Date)]) {
        state.withLock { state in
            for (player, at) in activity where (state.pending[player] ?? .distantPast) < at { state.pending[player] = at }
        }
    }

    /// Counts an encounter report, or returns the seconds to wait when the player sends them
    /// faster than ``LobbyConfiguration/encounterReportsPerMinute``.
    func admitReport(_ player: Int64, at now: Date) -> TimeInterval? {
        admit(\.reports, player, now)
    }

    /// Counts a location beacon's report of what it hears, or returns the seconds to wait (as
    /// many a minute per location as encounter reports per player).
    func admitHearings(_ player: Int64, location: Int64, at now: Date) -> TimeInterval? {
        admit(\.hearings, "\(player):\(location)", now)
    }

    /// Counts a resolution, or returns the seconds to wait (``LobbyConfiguration/resolutionsPerMinute``).
    func admitResolution(_ player: Int64, at now: Date) -> TimeInterval? {
        admit(\.resolutions, player, now)
    }

    /// Spends one of the player's guesses (an identity that named no player on the air); false,
    /// spending nothing, when none is left (``LobbyConfiguration/identityGuessesPerHour``).
    func spendGuess(_ player: Int64, at now: Date) -> Bool {
        admit(\.guesses, player, now) == nil
    }

    /// Whether the player has guesses left.
    func hasGuesses(_ player: Int64, at now: Date) -> Bool { guessWait(player, at: now) == 0 }

    /// Seconds until the player's next guess.
    func guessWait(_ player: Int64, at now: Date) -> TimeInterval {
        state.withLock { $0.guesses.wait(String(player), now: now.timeIntervalSince1970) }
    }

    private func admit(_ buckets: WritableKeyPath<State, AttemptBuckets>, _ player: Int64, _ now: Date) -> TimeInterval? {
        admit(buckets, String(player), now)
    }

    private func admit(_ buckets: WritableKeyPath<State, AttemptBuckets>, _ key: String, _ now: Date) -> TimeInterval? {
        let time = now.timeIntervalSince1970
        return state.withLock { state in
            let wait = state[keyPath: buckets].wait(key, now: time)
            guard wait == 0 else { return wait }
            state[keyPath: buckets].spend(key, now: time)
            return nil
        }
    }
}
