/// The games there are.
public enum MinigameCatalog {
    public static let all: [any Minigame] = [Screamer(), Shaker(), Statue(), Quickdraw()]

    /// The game called `name` (case-insensitive), or nil.
    public static func game(named name: String) -> (any Minigame)? {
        all.first { $0.name == name.lowercased() }
    }

    public static var names: [String] { all.map(\.name) }
}
