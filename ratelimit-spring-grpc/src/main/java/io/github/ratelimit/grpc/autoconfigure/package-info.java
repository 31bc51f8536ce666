/**
 * Auto-configuration of {@code @RateLimited} on gRPC services, on Spring Boot 4.1's gRPC server.
 */
@NullMarked
package io.github.ratelimit.grpc.autoconfigure;

import org.jspecify.annotations.NullMarked;
