import Foundation

/// The document's `UUID` schema (a beacon's proximity UUID) as Foundation's `UUID`. The generator
/// needs a module-qualified name, and on Linux `UUID` is declared in FoundationEssentials, where
/// `Foundation.UUID` does not find it.
public typealias LobbyUUID = UUID
