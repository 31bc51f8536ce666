package io.github.ratelimit.sample.webflux;

import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Renders documents, each a while: at most 2 of a client's renders in flight at once, across every instance
 * sharing the store. A third is rejected while two run, and passes once one of them ended or its client went away; a
 * render whose instance died frees its slot a minute (the hold) after it started.
 */
@RestController
@RequestMapping("/api/v1")
public class RenderController {

	private static final int MAX_MILLIS = 5_000;

	/**
	 * A render that takes {@code millis} to render.
	 * @param millis how long it takes, from 0 to 5,000
	 * @return how long it took
	 */
	@GetMapping("/renders")
	@RateLimited(name = "renders", algorithm = Algorithm.CONCURRENCY, limit = 2, hold = "1m",
			description = "Renders in flight at once per client IP")
	public Mono<Map<String, Object>> render(@RequestParam(defaultValue = "200") int millis) {
		if (millis < 0 || millis > MAX_MILLIS) {
			return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"'millis' must be from 0 to " + MAX_MILLIS));
		}
		// A real render would query and render for this long, without holding a thread.
		return Mono.delay(Duration.ofMillis(millis)).thenReturn(Map.of("renderedInMillis", millis));
	}

}
