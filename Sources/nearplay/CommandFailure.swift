/// An error the CLI reports as the sentence it carries (ArgumentParser prints it as `Error: …`).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}
