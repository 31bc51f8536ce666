package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Renders documents, each a while: at most 2 of a client's renders in flight at once, across every instance
 * sharing the store. A third is rejected while two run, and passes once one of them ended; a render whose instance
 * died frees its slot a minute (the hold) after it started.
 */
@RestController
@RequestMapping("/api/v1")
class RenderController {

	private static final int MAX_MILLIS = 5_000;

	@GetMapping("/renders")
	@RateLimited(name = "renders", algorithm = Algorithm.CONCURRENCY, limit = 2, hold = "1m",
			description = "Renders in flight at once per client IP")
	Map<String, Object> render(@RequestParam(defaultValue = "200") int millis) throws InterruptedException {
		if (millis < 0 || millis > MAX_MILLIS) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "'millis' must be from 0 to " + MAX_MILLIS);
		}
		Thread.sleep(millis); // a real render would query and render for this long
		return Map.of("renderedInMillis", millis);
	}

}
