"""The evaluation set and the gate's metrics (`evaluate`), and its configuration (`config`)."""
