package io.vkspark.gpu.internal;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloseablesTest {
  /** Records its close; throws {@code failure} (if any) after recording. */
  private static AutoCloseable part(List<String> closed, String name, Exception failure) {
    return () -> {
      closed.add(name);
      if (failure != null) {
        throw failure;
      }
    };
  }

  @Test
  void secondOfFourThrowsAllAreClosedFirstFailureThrown() {
    List<String> closed = new ArrayList<>();
    IllegalStateException second = new IllegalStateException("second");
    IllegalArgumentException fourth = new IllegalArgumentException("fourth");
    List<AutoCloseable> parts = List.of(part(closed, "a", null), part(closed, "b", second),
        part(closed, "c", null), part(closed, "d", fourth));
    RuntimeException thrown = assertThrows(RuntimeException.class, () -> Closeables.closeAll(parts));
    assertEquals(List.of("a", "b", "c", "d"), closed);
    assertSame(second, thrown);
    assertArrayEquals(new Throwable[] {fourth}, thrown.getSuppressed());
  }

  @Test
  void onlyTheSecondThrowsNothingSuppressed() {
    List<String> closed = new ArrayList<>();
    IllegalStateException second = new IllegalStateException("second");
    RuntimeException thrown = assertThrows(RuntimeException.class, () -> Closeables.closeAll(
        part(closed, "a", null), part(closed, "b", second), part(closed, "c", null), part(closed, "d", null)));
    assertEquals(List.of("a", "b", "c", "d"), closed);
    assertSame(second, thrown);
    assertEquals(0, thrown.getSuppressed().length);
  }

  @Test
  void checkedFailureIsWrappedNullsSkippedNoFailureNoThrow() {
    List<String> closed = new ArrayList<>();
    IOException io = new IOException("disk");
    RuntimeException thrown = assertThrows(RuntimeException.class,
        () -> Closeables.closeAll(part(closed, "a", io), null, part(closed, "b", null)));
    assertSame(io, thrown.getCause());
    assertEquals(List.of("a", "b"), closed);
    closed.clear();
    Closeables.closeAll(part(closed, "x", null), part(closed, "y", null));
    assertEquals(List.of("x", "y"), closed);
  }

  @Test
  void closeAllAfterAddsEveryFailureToThePrimaryAndNeverThrows() {
    List<String> closed = new ArrayList<>();
    RuntimeException primary = new RuntimeException("primary");
    IllegalStateException b = new IllegalStateException("b");
    IllegalStateException d = new IllegalStateException("d");
    Closeables.closeAllAfter(primary, List.of(part(closed, "a", null), part(closed, "b", b),
        part(closed, "c", null), part(closed, "d", d)));
    assertEquals(List.of("a", "b", "c", "d"), closed);
    assertArrayEquals(new Throwable[] {b, d}, primary.getSuppressed());
  }
}
