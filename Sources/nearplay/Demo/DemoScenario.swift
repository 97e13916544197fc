/// The room the demo plays in, for the simulated air: Alice comes round the corner 14 m from Bob
/// (out of range before, as the path loss puts her below what a radio hears) and walks up to
/// 1.5 m of him; Carol stands 7 m away at the side the whole time. The path-loss exponent is the
/// one Nearplay's ranging assumes indoors (2.8), so the distances the agents show are honest.
enum DemoScenario {
    static let json = """
        {
          "exponent": 2.8, "sigma": 1.0, "loss": 0.05, "seed": 7,
          "devices": {
            "alice": {"waypoints": [[0, 60, 0], [2.5, 60, 0], [2.6, 14, 0], [9, 1.5, 0]]},
            "bob": {"waypoints": [[0, 0, 0]]},
            "carol": {"waypoints": [[0, 0, 7]]}
          }
        }
        """
}
