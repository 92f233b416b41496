package io.vkspark.gpu.column;

/**
 * Arithmetic operators: {@code +}, {@code -}, {@code *} (integers wrap, doubles IEEE round-to-nearest).
 * Both the steps a kernel computes on an argument before the call ({@link ArgOps}) and the
 * expressions a reduction computes on the device ({@code column.reduce.DeviceExpr.Arithmetic}) use it.
 */
public enum ArithOp { ADD, SUBTRACT, MULTIPLY }
