import Foundation
import Lobby
import Synchronization

/// Slows password guessing down: sign-in and registration attempts are counted per account and per
/// client address, and an attempt over either limit is refused with 429 before any bcrypt work is
/// done, so a guesser costs the lobby almost nothing and other players keep its CPU.
///
/// A successful sign-in gives its account's attempts back (its owner knew the password); failures
/// and registrations do not. A guesser can therefore keep an account's owner waiting too, at most
/// `account.interval` seconds per guess: the price of slowing the guesser down at all.
public final class SignInThrottle: Sendable {
    /// The limits; the defaults let a player mistype a few times and a household share an address,
    /// and hold a guesser to a few attempts a minute.
    public struct Limits: Sendable {
        /// Sign-in attempts per account (username).
        var account: AttemptBuckets.Limit
        /// Sign-in attempts per client address.
        var address: AttemptBuckets.Limit
        /// Registrations per client address.
        var registrations: AttemptBuckets.Limit

        public init(
            accountBurst: Int = 10, accountInterval: TimeInterval = 30,
            addressBurst: Int = 30, addressInterval: TimeInterval = 6,
            registrationBurst: Int = 20, registrationInterval: TimeInterval = 60
        ) {
            account = .init(burst: accountBurst, interval: accountInterval)
            address = .init(burst: addressBurst, interval: addressInterval)
            registrations = .init(burst: registrationBurst, interval: registrationInterval)
        }
    }

    /// What an attempt is: signing in to an account, or registering one.
    public enum Attempt: Sendable {
        case signIn(username: String)
        case registration(username: String)
    }

    private struct State {
        var accounts: AttemptBuckets
        var addresses: AttemptBuckets
        var registrations: AttemptBuckets
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> TimeInterval

    public init(_ limits: Limits = .init(), now: @escaping @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }) {
        state = Mutex(State(
            accounts: AttemptBuckets(limits.account), addresses: AttemptBuckets(limits.address),
            registrations: AttemptBuckets(limits.registrations)))
        self.now = now
    }

    /// Counts an attempt from `address`, or returns the whole seconds to wait (at least 1) when it
    /// is over a limit; a refused attempt is not counted.
    public func admit(_ attempt: Attempt, from address: String) -> Int? {
        let time = now()
        let wait: TimeInterval = state.withLock { state in
            switch attempt {
            case .signIn(let username):
                let account = Self.accountKey(username)
                let wait = max(state.accounts.wait(account, now: time), state.addresses.wait(address, now: time))
                guard wait == 0 else { return wait }
                state.accounts.spend(account, now: time)
                state.addresses.spend(address, now: time)
                return 0
            case .registration(let username):
                // A name being registered is an account too: one address cannot hammer it, and
                // many addresses share its budget.
                let account = "+" + Self.accountKey(username)
                let wait = max(state.registrations.wait(address, now: time), state.accounts.wait(account, now: time))
                guard wait == 0 else { return wait }
                state.registrations.spend(address, now: time)
                state.accounts.spend(account, now: time)
                return 0
            }
        }
        guard wait > 0 else { return nil }
        return max(1, Int(wait.rounded(.up)))
    }

    /// A sign-in succeeded: its account's attempts come back.
    public func signedIn(_ username: String) {
        state.withLock { $0.accounts.reset(Self.accountKey(username)) }
    }

    /// Usernames are compared case-insensitively here, so changing case buys a guesser nothing.
    private static func accountKey(_ username: String) -> String { String(username.prefix(64)).lowercased() }
}

extension SignInThrottle.Limits {
    /// No limit that anyone would reach: for tests and benchmarks that register many players from
    /// one address (`lobby serve --sign-in-throttle off`).
    public static var unlimited: Self {
        .init(accountBurst: .max / 2, accountInterval: 1, addressBurst: .max / 2, addressInterval: 1,
              registrationBurst: .max / 2, registrationInterval: 1)
    }
}
