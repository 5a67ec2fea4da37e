package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/bench/scale"
)

// populate creates n ConfigMaps in ten namespaces, each with 900 random
// characters of data (base32 text from crypto/rand: gzip saves little),
// or, if repeated, the scale ladder's one 900-byte text, the same in
// every ConfigMap, which gzip shrinks to almost nothing.
func populate(ctx context.Context, cfg *rest.Config, n int, repeated bool) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for i := range 10 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sp-%d", i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return scale.InParallel(n, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%07d", i), Namespace: fmt.Sprintf("sp-%d", i%10),
				Labels: map[string]string{"app": "app-" + strconv.Itoa(i%100)}},
			Data: map[string]string{"payload": payload(repeated)},
		}
		_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

func payload(repeated bool) string {
	if repeated {
		return scale.RepeatedPayload
	}
	return randomText(900)
}

// randomText is n characters of base32 text from crypto/rand.
func randomText(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
	}
	return b.String()[:n]
}

func payloadName(repeated bool) string {
	if repeated {
		return "repeated"
	}
	return "random"
}
