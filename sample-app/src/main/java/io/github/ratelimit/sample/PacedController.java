package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A limit that makes requests wait for their turn rather than fail: 10 a second per client, and a request over it
 * waits up to a second for the turn its bucket reserved (20 of a client at most), then runs.
 */
@RestController
@RequestMapping("/api/v1")
class PacedController {

	@RateLimited(name = "paced", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1s", maxWait = "1s")
	@GetMapping("/paced")
	Map<String, Object> paced() {
		return Map.of("ranAt", System.currentTimeMillis());
	}

}
