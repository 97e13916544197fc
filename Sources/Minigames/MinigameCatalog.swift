/// The games there are.
public enum MinigameCatalog {
    public static let all: [any Minigame] = [Screamer(), Shaker(), Statue(), Quickdraw()]

    /// The game called `name` (case-insensitive), or nil.
    public static func game(named name: MinigameName) -> (any Minigame)? {
        let lowercased = MinigameName(name.rawValue.lowercased())
        return all.first { $0.name == lowercased }
    }

    public static var names: [MinigameName] { all.map(\.name) }
}
