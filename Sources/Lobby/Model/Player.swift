import BeaconFrames
import Foundation

/// A player as it sees itself: everything but the password.
public struct Player: Codable, Sendable, Equatable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var email: String
    /// The identity it advertises now (an iBeacon one; `{uuid, major, minor}` in the API).
    public var beacon: BeaconIdentity
    /// Path of the photo (relative to the API root), nil without one.
    public var photoURL: String?
    public var createdAt: Date
    /// IANA time zone its days are counted in (statistics, boards); nil: UTC.
    public var timeZone: String? = nil
    /// ISO 3166-1 alpha-2 country code, if it gave one.
    public var country: String? = nil
}

/// What a new player gives to register.
public struct Registration: Codable, Sendable {
    public var username: String
    public var firstName: String
    public var lastName: String
    public var email: String
    public var password: String

    public init(username: String, firstName: String, lastName: String, email: String, password: String) {
        self.username = username
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.password = password
    }
}

/// The editable part of a profile; nil fields stay as they are.
public struct PlayerChanges: Sendable {
    public var firstName: String?
    public var lastName: String?

    public init(firstName: String? = nil, lastName: String? = nil) {
        self.firstName = firstName
        self.lastName = lastName
    }
}

/// A logged-in session: the bearer token (shown once) and when it stops working.
public struct SessionToken: Codable, Sendable {
    public var token: String
    public var expiresAt: Date
}
