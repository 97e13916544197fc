import BeaconKeys
import Foundation
import Synchronization

/// Who advertises which rotating identity in which period: the lobby's side of
/// ``RotatingIdentity``. It holds every player's and location's secret and, for the few periods
/// around now, a table from each period's 32-bit value to its owners, so that mapping what an
/// agent heard back to a player is one dictionary lookup per period.
///
/// Tables are kept for the period before the one before now through the next one (four in all):
/// a sighting at t resolves against t's period and its neighbours (clocks a period apart still
/// work), and an identity two periods old can still be told apart from one never issued. The
/// next period's table after that is prepared in the background as soon as a lookup sees it
/// missing, so the work of a new period (one HMAC per secret: about 0.1 s per 100,000) falls
/// on no request. A secret added meanwhile (registration, a player's first key) goes into every
/// table at once.
final class IdentityDirectory: Sendable {
    /// Whose identity it is. Players and locations advertise under different UUIDs, so each
    /// has its own tables.
    enum Owner: Sendable, Hashable { case player, location }

    /// The owners of one 32-bit value in one period: almost always one, two or more when values
    /// collide (about once in 43,000 pairs of lookups at 100,000 players).
    struct Table: Sendable {
        var single: [UInt32: Int64] = [:]
        var shared: [UInt32: [Int64]] = [:]

        mutating func insert(_ value: UInt32, _ id: Int64) {
            if let others = shared[value] {
                if !others.contains(id) { shared[value] = others + [id] }
            } else if let other = single[value] {
                if other != id {
                    single[value] = nil
                    shared[value] = [other, id]
                }
            } else {
                single[value] = id
            }
        }

        func owners(_ value: UInt32) -> [Int64] {
            if let id = single[value] { return [id] }
            return shared[value] ?? []
        }
    }

    private struct Side: Sendable {
        var secrets: [Int64: BeaconSecret] = [:]
        var tables: [Int64: Table] = [:]
        /// Periods whose table is being built outside the lock.
        var preparing: Set<Int64> = []
    }

    private struct State: Sendable {
        var players = Side()
        var locations = Side()

        subscript(owner: Owner) -> Side {
            get { owner == .player ? players : locations }
            set { if owner == .player { players = newValue } else { locations = newValue } }
        }
    }

    let period: RotationPeriod
    private let state = Mutex(State())

    init(period: RotationPeriod) {
        self.period = period
    }

    /// The value `secret` advertises in period `index` as `owner`.
    static func value(_ owner: Owner, _ secret: BeaconSecret, period index: Int64) -> UInt32 {
        let (major, minor) = owner == .player
            ? RotatingIdentity.player(secret, period: index) : RotatingIdentity.location(secret, period: index)
        return RotatingIdentity.key(major: major, minor: minor)
    }

    /// Takes the secrets the store holds (at open) and prepares the tables around `now`.
    func load(players: [(Int64, BeaconSecret)], locations: [(Int64, BeaconSecret)], now: Date) {
        state.withLock { state in
            state.players.secrets = Dictionary(players, uniquingKeysWith: { _, last in last })
            state.locations.secrets = Dictionary(locations, uniquingKeysWith: { _, last in last })
            state.players.tables = [:]
            state.locations.tables = [:]
        }
        let current = period.index(at: now)
        for owner in [Owner.player, .location] {
            for index in (current - 2)...(current + 1) { build(owner, period: index) }
        }
    }

    /// Adds (or replaces) one secret, in every table held.
    func add(_ owner: Owner, _ id: Int64, secret: BeaconSecret) {
        let periods = state.withLock { Array($0[owner].tables.keys) }
        let values = periods.map { ($0, Self.value(owner, secret, period: $0)) }
        state.withLock { state in
            let old = state[owner].secrets.updateValue(secret, forKey: id)
            // Known already (another instance's word of a secret this one stored, say).
            if old == secret { return }
            for (index, value) in values {
                if let old, old != secret { state[owner].tables[index]?.remove(Self.value(owner, old, period: index), id) }
                state[owner].tables[index]?.insert(value, id)
            }
        }
    }

    /// The ids whose `owner` identity was `major`/`minor` in each of `periods` that a table is
    /// held for (two periods before now's to the next one), with the period. Older periods are
    /// not searched: computing a period on demand would cost one HMAC per secret, and an
    /// identity that old proves nothing.
    func owners(_ owner: Owner, major: Int, minor: Int, in periods: ClosedRange<Int64>, now: Date) -> [(id: Int64, period: Int64)] {
        ensureTables(owner, now: now)
        let value = RotatingIdentity.key(major: major, minor: minor)
        return state.withLock { state in
            var found: [(id: Int64, period: Int64)] = []
            for index in periods {
                guard let table = state[owner].tables[index] else { continue }
                found += table.owners(value).map { ($0, index) }
            }
            return found
        }
    }

    /// Makes sure the tables from two periods before now to the next one exist (building the
    /// missing ones here, even one the background is building), drops older ones, and starts building the one after next in the
    /// background.
    private func ensureTables(_ owner: Owner, now: Date) {
        let current = period.index(at: now)
        let (missing, startAhead): ([Int64], Bool) = state.withLock { state in
            for index in state[owner].tables.keys where index < current - 2 { state[owner].tables[index] = nil }
            // A table the background is still building counts as missing too: a lookup must not
            // wait for it, nor miss every identity of its period (after a jump of the clock the
            // table being built ahead can be the current one).
            let missing = ((current - 2)...(current + 1)).filter { state[owner].tables[$0] == nil }
            let ahead = state[owner].tables[current + 2] == nil && !state[owner].preparing.contains(current + 2)
            if ahead { state[owner].preparing.insert(current + 2) }
            return (missing, ahead)
        }
        for index in missing { build(owner, period: index, reserved: true) }
        if startAhead {
            Task.detached(priority: .utility) { [self] in self.build(owner, period: current + 2, reserved: true) }
        }
    }

    /// Builds the table of `period` from a copy of the secrets, outside the lock, then adds the
    /// secrets that arrived meanwhile.
    private func build(_ owner: Owner, period index: Int64, reserved: Bool = false) {
        let secrets: [Int64: BeaconSecret]? = state.withLock { state in
            if !reserved {
                guard state[owner].tables[index] == nil, !state[owner].preparing.contains(index) else { return nil }
                state[owner].preparing.insert(index)
            }
            return state[owner].secrets
        }
        guard let secrets else { return }
        var table = Table()
        table.single.reserveCapacity(secrets.count)
        for (id, secret) in secrets { table.insert(Self.value(owner, secret, period: index), id) }
        state.withLock { state in
            for (id, secret) in state[owner].secrets where secrets[id] != secret {
                if let old = secrets[id] { table.remove(Self.value(owner, old, period: index), id) }
                table.insert(Self.value(owner, secret, period: index), id)
            }
            state[owner].tables[index] = table
            state[owner].preparing.remove(index)
        }
    }

    /// Players and locations with a secret, and tables held (for tests and /metrics).
    var census: (players: Int, locations: Int, tables: Int) {
        state.withLock { ($0.players.secrets.count, $0.locations.secrets.count, $0.players.tables.count + $0.locations.tables.count) }
    }
}

extension IdentityDirectory.Table {
    mutating func remove(_ value: UInt32, _ id: Int64) {
        if single[value] == id {
            single[value] = nil
        } else if var others = shared[value] {
            others.removeAll { $0 == id }
            if others.count == 1 {
                shared[value] = nil
                single[value] = others[0]
            } else {
                shared[value] = others
            }
        }
    }
}
