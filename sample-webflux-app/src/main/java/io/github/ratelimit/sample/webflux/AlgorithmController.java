package io.github.ratelimit.sample.webflux;

import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * One endpoint per algorithm, each 10 requests per 10 seconds per client IP (the buckets with a burst of 5), so that
 * their behaviour can be compared with curl. Every policy's algorithm, limit, window and burst can be overridden
 * under {@code ratelimit.policies.<name>}.
 */
@RestController
@RequestMapping("/api/v1/algorithms")
public class AlgorithmController {

	@RateLimited(name = "fixed-window", limit = 10, window = "10s", algorithm = Algorithm.FIXED)
	@GetMapping("/fixed-window")
	public Mono<Map<String, Object>> fixedWindow() {
		return Mono.just(ok("fixed-window"));
	}

	@RateLimited(name = "sliding-log", limit = 10, window = "10s", algorithm = Algorithm.SLIDING_LOG)
	@GetMapping("/sliding-log")
	public Mono<Map<String, Object>> slidingLog() {
		return Mono.just(ok("sliding-log"));
	}

	@RateLimited(name = "sliding-counter", limit = 10, window = "10s", algorithm = Algorithm.SLIDING_COUNTER)
	@GetMapping("/sliding-counter")
	public Mono<Map<String, Object>> slidingCounter() {
		return Mono.just(ok("sliding-counter"));
	}

	@RateLimited(name = "token-bucket", limit = 10, window = "10s", burst = 5, algorithm = Algorithm.TOKEN_BUCKET)
	@GetMapping("/token-bucket")
	public Mono<Map<String, Object>> tokenBucket() {
		return Mono.just(ok("token-bucket"));
	}

	@RateLimited(name = "leaky-bucket", limit = 10, window = "10s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET)
	@GetMapping("/leaky-bucket")
	public Mono<Map<String, Object>> leakyBucket() {
		return Mono.just(ok("leaky-bucket"));
	}

	private static Map<String, Object> ok(String algorithm) {
		return Map.of("status", "success", "algorithm", algorithm);
	}

}
