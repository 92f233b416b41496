package io.vkspark.gpu.translate;

import java.util.List;

/** One translated method as a GLSL function of the IR: {@code returns name(params) { body }}. */
record Fn(String name, JType returns, List<Var> params, List<Stmt> body) {
  Fn {
    params = List.copyOf(params);
    body = List.copyOf(body);
  }
}
